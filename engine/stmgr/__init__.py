"""The Stream Manager: one per container, every tuple goes through it.

It accepts its container's instances, registers with the Topology Master once all of
them have, connects to every other Stream Manager, and routes columnar batches per
destination task from their metadata columns (fields hashes, explicit destinations),
splitting and regrouping value blobs by index without ever decoding them.
"""
