"""An AutoWSL entry written as the 2019 starting kit and prize-winning entries were (ours).

Not any team's code: the same imports and calls, so it fails where they fail. A ``model.py``
importing sibling modules, LightGBM, hyperopt and psutil; ``lgb.train`` with
``early_stopping_rounds``/``verbose_eval`` (gone in LightGBM 4) on the validation set;
``hyperopt.fmin`` with ``rstate=np.random.RandomState(1)`` (refused from hyperopt 0.2.6);
the pandas 1.x idioms of ``preprocess.py``.
"""

import os
import pickle
import time

import lightgbm as lgb
import numpy as np
import pandas as pd
import psutil
from hyperopt import STATUS_OK, Trials, fmin, hp, space_eval, tpe
from sklearn.model_selection import train_test_split

from preprocess import clean_df, feature_engineer

PARAMS = {"objective": "binary", "metric": "auc", "verbosity": -1, "seed": 1, "num_threads": 1}


def log(message):
    """Print with the process's resident memory, as 2019 entries watched it with psutil."""
    rss = psutil.Process(os.getpid()).memory_info().rss / 2**20
    print(f"[{rss:.0f} MiB] {message}", flush=True)


class Model:
    """entry"""

    def __init__(self, info):
        self.task = info["task"]
        self.train_time_budget = info["time_budget"]
        self.model = None

    def train(self, X: pd.DataFrame, y: pd.Series):
        start = time.time()
        clean_df(X)
        feature_engineer(X)
        if self.task == "ssl":
            X, y = X[y != 0], y[y != 0]
        y = (y > 0).astype(int)
        X_train, X_val, y_train, y_val = train_test_split(
            X, y, test_size=0.25, random_state=1, stratify=y
        )
        train_data = lgb.Dataset(X_train, label=y_train)
        valid_data = lgb.Dataset(X_val, label=y_val)
        space = {
            "learning_rate": hp.loguniform("learning_rate", np.log(0.02), np.log(0.3)),
            "num_leaves": hp.choice("num_leaves", np.linspace(4, 32, 8, dtype=int)),
            "feature_fraction": hp.quniform("feature_fraction", 0.5, 1.0, 0.1),
            "min_data_in_leaf": hp.choice("min_data_in_leaf", [5, 10, 20]),
        }

        def objective(hyperparams):
            model = lgb.train({**PARAMS, **hyperparams}, train_data, 100, valid_data,
                              early_stopping_rounds=10, verbose_eval=0)
            return {"loss": -model.best_score["valid_0"]["auc"], "status": STATUS_OK}

        trials = Trials()
        best = fmin(fn=objective, space=space, trials=trials, algo=tpe.suggest, max_evals=6,
                    verbose=0, rstate=np.random.RandomState(1))
        hyperparams = space_eval(space, best)
        self.model = lgb.train({**PARAMS, **hyperparams}, train_data, 200, valid_data,
                               early_stopping_rounds=20, verbose_eval=50)
        log(f"trained in {time.time() - start:.1f} s of {self.train_time_budget}: {hyperparams}")

    def predict(self, X: pd.DataFrame):
        clean_df(X)
        feature_engineer(X)
        return pd.Series(self.model.predict(X, num_iteration=self.model.best_iteration))

    def save(self, directory: str):
        pickle.dump(self.model, open(os.path.join(directory, "model.pkl"), "wb"))

    def load(self, directory: str):
        self.model = pickle.load(open(os.path.join(directory, "model.pkl"), "rb"))
