"""``heron-migrate``: moves a streamparse project onto ``compat.storm_api``.

Layout: ``rules/`` holds one libcst codemod per rule (``RULES`` is the registry),
``transform`` runs rules over one source text, ``project`` over a tree, ``files`` does the
I/O (discovery, UTF-8 reads, atomic writes), ``cli`` is the click command.
"""
