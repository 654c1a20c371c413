"""Components of the word-count benchmark (bench/wordcount.py), written against
``compat.storm_api`` exactly as a streamparse project would write them."""
