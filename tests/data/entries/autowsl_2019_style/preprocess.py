"""Table preparation in the 2019 style: in-place ``fillna``, ``int(x)`` categorical ids, ``.dt``."""

import datetime

NUMERICAL_PREFIX = "n_"
CATEGORY_PREFIX = "c_"
MULTI_CAT_PREFIX = "m_"
TIME_PREFIX = "t_"


def clean_df(df):
    for c in [c for c in df if c.startswith(NUMERICAL_PREFIX)]:
        df[c].fillna(-1, inplace=True)
    for c in [c for c in df if c.startswith((CATEGORY_PREFIX, MULTI_CAT_PREFIX))]:
        df[c].fillna("0", inplace=True)
    for c in [c for c in df if c.startswith(TIME_PREFIX)]:
        df[c].fillna(datetime.datetime(1970, 1, 1), inplace=True)


def feature_engineer(df):
    for c in [c for c in df if c.startswith(CATEGORY_PREFIX)]:
        df[c] = df[c].apply(lambda x: int(x))
    for c in [c for c in df if c.startswith(MULTI_CAT_PREFIX)]:
        df[c] = df[c].apply(lambda x: int(x.split(",")[0]))
    for c in [c for c in df if c.startswith(TIME_PREFIX)]:
        df["hour_" + c] = df[c].dt.hour
        df["weekofyear_" + c] = df[c].dt.weekofyear
        df.drop(c, axis=1, inplace=True)
