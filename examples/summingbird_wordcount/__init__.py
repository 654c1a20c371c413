"""Word count, Summingbird's first example, written once and run on two platforms."""
