"""A host of several worker processes: the bus between them, session leases, the cluster.

``bus`` (the ``Bus`` and the in-process ``LocalBus``) and ``redis_bus`` carry frames and
commands between workers; ``leases`` says which worker runs a session, and ``owners`` names
the workers (and tells one that is gone); ``cluster`` is a hub's part in such a host;
``orphans`` frees the leases, notes the questions and ends the runs a worker that is gone left.
"""
