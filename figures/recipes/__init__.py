"""One module per figure; see ``figures.registry`` for what a recipe module defines."""
