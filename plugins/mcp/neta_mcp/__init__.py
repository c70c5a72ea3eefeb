"""MCP servers become Neta toolsets: the servers in ``mcp.json`` each give one toolset.

Configuration (the ``mcpServers`` format MCP clients share) is read from ``NETA_HOME/mcp.json``
and the workspace's ``.neta/mcp.json`` (the workspace wins per name), plus the servers a host
passes as ``Agent(mcp_servers=...)``. Each server ``NAME`` becomes toolset ``mcp-NAME``.
"""
