"""Questions: the unit of the answer flow, a question set read from a file or asked on the command line."""
