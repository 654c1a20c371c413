"""The Topology Master: container 0's coordinator.

It records its location in the state manager (an ephemeral node), waits for every
Stream Manager of the packing plan, builds the physical plan, stores it and broadcasts
it; a restarted Topology Master adopts the stored plan. It serves control (activate,
deactivate) and answers metric queries from what the Metrics Managers publish.
"""
