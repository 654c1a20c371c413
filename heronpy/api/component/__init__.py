"""heronpy's component specs, and the adapter that runs heronpy components on our runtime."""
