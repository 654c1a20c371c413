"""The Kafka benchmark's components (bench/kafka.py): Kafka -> split -> count -> Kafka."""
