"""heronpy bolts."""
