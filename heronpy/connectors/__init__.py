"""heronpy's streamlet connectors: ``mock`` (ArrayLooper) and ``textfiles``."""
