"""heronpy spouts."""
