"""Command-line tools that mirror Kafka's own (kafka-dump-log, ...), run against lab data dirs."""
