"""File readers and writers of the challenges' formats, apart from the pure metrics.

``vec`` (PhysioNet 2018 ``.vec`` predictions), ``arousal_mat`` (2018 MATLAB v7.3
``-arousal.mat`` references), ``volumes`` (NIfTI/MHA/NRRD images for segmentation), ``brat``
(eHealth-KD 2019 BRAT-like sentence and annotation files) and ``label_csv`` (AutoWSL solution
and prediction CSVs). Readers may use ``proctor.metrics`` for its types and validation errors
and ``proctor.errors``; nothing else of Proctor.
"""
