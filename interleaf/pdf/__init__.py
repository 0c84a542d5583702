"""PDF pages as both parse and describe read them: opening a file, its words, rows of words,
renders and crops, and the OCR engines that read pixels when there is no text layer."""
