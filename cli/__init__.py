"""The ``faceoff`` command line: ``solve`` runs one solver, ``solvers`` lists them."""


class InputError(Exception):
    """Bad input: reported as one line on stderr with exit status 2."""
