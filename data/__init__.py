"""Datasets: svmlight/LIBSVM files, the papers' synthetic problems, transforms."""
