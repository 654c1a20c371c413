class PackingError(ValueError):
    """A topology cannot be packed as asked; the message names the component and the limit."""
