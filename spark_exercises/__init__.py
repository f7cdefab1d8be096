"""PySpark exercises: a data source reading committed records from a lab topic, notebooks and an autograder."""
