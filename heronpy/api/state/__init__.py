"""heronpy's state API: ``State``/``HashMapState`` and ``StatefulComponent``."""
