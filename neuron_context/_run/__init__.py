"""What a run is made of, below the loop and its middleware: the events it reports, the
state it keeps, the context a hook or tool sees (:class:`RunContext`), and tools."""
