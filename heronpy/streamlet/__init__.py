"""heronpy's Streamlet API (``heronpy.streamlet``) planned onto heronpy.api spouts and bolts.

See docs/heronpy-streamlet.md.
"""
