"""The spouts and bolts a streamlet graph is planned into (one module per operator)."""
