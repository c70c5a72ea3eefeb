"""What the network hosts share: the session store, the live session hub, pending questions."""
