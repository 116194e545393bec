"""The ``visceral-anatomy3`` reference challenge: synthetic CT/MR volumes, organ segmentation."""
