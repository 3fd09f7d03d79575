"""The registry of named datasets: what each name is, where its file comes from, its shape.

Two kinds of entries:

- **Official LIBSVM datasets** (``a9a``, ``rcv1.binary``, ``news20``, ...) with the URL on the
  LIBSVM page (Chang & Lin, https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/) and the
  shape it states. Their official sha256 is **unknown** (this registry was written offline):
  ``Source.sha256`` is None, integrity is then checked by the parsed shape, and the sha256 of
  the first download is recorded next to the cached file and enforced afterwards
  (:mod:`faceoff.data.fetch`). ``nnz`` is None where it is not known for sure.
- **Mirror files**: every file of the shared mirror (``FACEOFF_DATA_MIRROR``, its
  MANIFEST.tsv) under its own name, with the MANIFEST's sha256, shape and provenance. Files
  whose content is the official one (``a9a.bz2`` is LIBSVM ``a9a``) are the first source of the
  official entry; files that differ (``leu_recon``, ``phishing``, ``rcv1_small_vw``,
  ``mnist_test.scale``, ``madelon.t``, ``usps_zip_train``, ``dorothea_train``,
  ``news20.rdatasets``, ...) have no URL and only their own name.

The mirror entries were generated once from MANIFEST.tsv and are kept as a literal, so the
registry works without the mirror.

A test split is an entry of its own, named by ``DatasetSpec.test`` (``a9a`` → ``a9a.t``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
TASKS = ("binary", "multiclass", "regression")
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_file_name(file: str) -> str:
    """``file`` if it is a plain file name (letters, digits, ``._-``, no ``..``, not hidden),
    which can never leave the folder it is joined to; ValueError otherwise."""
    if not _FILE_NAME.fullmatch(file) or ".." in file:
        raise ValueError(f"source file {file!r} must be a plain file name, not a path")
    return file


class DatasetError(Exception):
    """A dataset that cannot be found, downloaded, verified or parsed (the message says why)."""


class UnknownDatasetError(DatasetError):
    """A name that is not in the registry; the message lists close matches."""


@dataclass(frozen=True)
class Source:
    """One place a dataset's file can come from.

    Parameters
    ----------
    file : str
        Its name in the mirror and cache folders: a plain file name, never a path.
    sha256 : str or None
        Of the file as stored; None when unknown (then the first download's hash is recorded).
    url : str or None
        Where to download it; None for a file only the mirror has.
    """

    file: str
    sha256: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        check_file_name(self.file)
        if self.sha256 is not None and not re.fullmatch(r"[0-9a-f]{64}", self.sha256):
            raise ValueError(f"sha256 {self.sha256!r} of {self.file} is not 64 hex digits")


@dataclass(frozen=True)
class DatasetSpec:
    """A named dataset: one svmlight file and what it must parse to.

    Parameters
    ----------
    name : str
        The registry key.
    task : {"binary", "multiclass", "regression"}
    sources : tuple of Source
        Tried in order: every source in the mirror, then in the cache, then the first URL.
    n_samples, n_features : int
        The expected shape; ``n_features`` is passed to the parser so splits align.
    nnz : int or None
        Expected number of stored non-zeros, None when not known.
    test : str or None
        Registry name of the matching test split.
    positive : tuple of float or None
        Classes that become +1 in the usual binary reduction of a multiclass dataset.
    provenance : str
        Where the data comes from and how it differs from the original.
    """

    name: str
    task: str
    sources: tuple[Source, ...]
    n_samples: int
    n_features: int
    nnz: int | None = None
    test: str | None = None
    positive: tuple[float, ...] | None = None
    provenance: str = ""

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task {self.task!r} of {self.name}; accepted: {', '.join(TASKS)}")
        if not self.sources:
            raise ValueError(f"dataset {self.name} has no source")

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(s.url for s in self.sources if s.url)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "task": self.task,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "nnz": self.nnz,
            "test": self.test,
            "positive": list(self.positive) if self.positive else None,
            "files": [s.file for s in self.sources],
            "urls": list(self.urls),
            "sha256": {s.file: s.sha256 for s in self.sources},
            "provenance": self.provenance,
        }


def _official(
    name: str,
    path: str,
    task: str,
    n_samples: int,
    n_features: int,
    provenance: str,
    **extra,
) -> DatasetSpec:
    """An entry downloaded from ``LIBSVM + path`` (official sha256 unknown)."""
    source = _libsvm_source(path)
    return DatasetSpec(name, task, (source,), n_samples, n_features, provenance=provenance, **extra)


def _libsvm_source(path: str, taken: str | None = None) -> Source:
    """The official file at ``LIBSVM + path``, stored under its own name, or as
    ``NAME.libsvm.bz2`` when that name is ``taken`` by a mirror file with other bytes."""
    file = path.rsplit("/", 1)[-1]
    if file in (taken, *_MIRROR_ONLY_FILES):
        file = file.removesuffix(".bz2") + ".libsvm.bz2"
    return Source(file, None, LIBSVM + path)


# Mirror files that share the name of an official file without being byte-identical to it.
_MIRROR_ONLY_FILES = ("news20.bz2",)

# Official URLs of the mirror files whose content is the LIBSVM file (MANIFEST provenance).
MIRROR_URLS = {
    "a9a": "binary/a9a",
    "a9a.t": "binary/a9a.t",
    "a8a": "binary/a8a",
    "a8a.t": "binary/a8a.t",
    "a1a": "binary/a1a",
    "a1a.t": "binary/a1a.t",
    "w8a": "binary/w8a",
    "mushrooms": "binary/mushrooms",
    "splice": "binary/splice",
    "splice.t": "binary/splice.t",
    "svmguide1": "binary/svmguide1",
    "australian": "binary/australian",
    "cpusmall": "regression/cpusmall",
    "colon-cancer": "binary/colon-cancer.bz2",
}
TEST_SPLITS = {
    "a9a": "a9a.t",
    "a8a": "a8a.t",
    "a1a": "a1a.t",
    "splice": "splice.t",
    "w8a": "w8a.t",
    "leu_recon": "leu_recon.t",
    "leu_golub_raw_train": "leu_golub_raw_test",
}

# Generated once from /work/shared/datasets/MANIFEST.tsv: name, file, task,
# (n_samples, n_features, nnz), sha256 of the .bz2, content is the official one, provenance.
MIRROR_FILES: tuple[tuple, ...] = (
    (
        "a9a",
        "a9a.bz2",
        "binary",
        (32561, 123, 451592),
        "1dcb2b4aedea0b5a9e964192dd211675d16cf05ab6477ddd0702d87c1d1af8da",
        True,
        (
            "a9a. Source: SofianeTanji/snacks @ "
            "352cf02bacc00b5926fe6e25acb3d01620060479 : a9a (lines 1-32561 of "
            "a9a+a9a.t concatenation). LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), originally UCI Adult "
            "(Platt 1998 preprocessing, 123 binary features); cross-checked: "
            "identical (modulo 0/1 label recoding) to VinceShieh/Spark-AdaOptimizer "
            "data/a9a except that copy drops 1 line. Label counts: -1=24720, 1=7841."
        ),
    ),
    (
        "a9a.t",
        "a9a.t.bz2",
        "binary",
        (16281, 123, 225731),
        "e55725b53c3c47f7053bd3ef12e41555539eac4c0fe989e69345cc4dd0ea6e8d",
        True,
        (
            "a9a.t (test). Source: UltramanGaia/ML2017-lab-02 @ "
            "a83899df9c288a04fb7047dbcbdf1d2eafb28e70 : data/a9a.t. LIBSVM datasets "
            "page (Chang & Lin, csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), UCI "
            "Adult test split; same git blob in carolinetfls/gpu_svm_acceleration "
            "datasets/a9a.t and equal to tail of snacks a9a. Label counts: -1=12435, "
            "1=3846."
        ),
    ),
    (
        "a8a",
        "a8a.bz2",
        "binary",
        (22696, 123, 314815),
        "a955f81aa2d08b098fb1fd2db042a3bfe6f00439a23b22038a46bd53a0345a64",
        True,
        (
            "a8a. Source: unc-optimization/AccSPD @ "
            "d2f1f2c961e3401032649544445bb24ab63ab1c5 : data/a8a. LIBSVM datasets "
            "page (Chang & Lin, csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), UCI "
            "Adult; identical (after CRLF->LF) to HeJingweiFoward/SVM DataSet/a8a. "
            "Label counts: -1=17190, 1=5506."
        ),
    ),
    (
        "a8a.t",
        "a8a.t.bz2",
        "binary",
        (9865, 123, 136777),
        "56fba994933704f719e5095cda7b05dd66720e5ee723f6ff70f72597f342c171",
        True,
        (
            "a8a.t (test). Source: HeJingweiFoward/SVM @ "
            "5792304fc04fee3750a11b4fad6905e605c7e4d2 : DataSet/a8a.t. LIBSVM "
            "datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), UCI Adult. Label counts: "
            "-1=7530, 1=2335."
        ),
    ),
    (
        "a1a",
        "a1a.bz2",
        "binary",
        (1605, 123, 22249),
        "f02b5fe13ed09e23506aa04a0922e15d7a6708996f24dfe88ae094f30e916b1a",
        True,
        (
            "a1a. Source: HeJingweiFoward/SVM @ "
            "5792304fc04fee3750a11b4fad6905e605c7e4d2 : DataSet/a1a (CRLF->LF, final "
            "newline added). LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), UCI Adult. Label counts: "
            "-1=1210, 1=395."
        ),
    ),
    (
        "a1a.t",
        "a1a.t.bz2",
        "binary",
        (30956, 123, 429343),
        "fa6749863aeb9f40c6f9982474617c2a74e30a23a5e801ff5b78b81727bbf1b5",
        True,
        (
            "a1a.t (test). Source: HeJingweiFoward/SVM @ "
            "5792304fc04fee3750a11b4fad6905e605c7e4d2 : DataSet/a1a.t. LIBSVM "
            "datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), UCI Adult. Label counts: "
            "-1=23510, 1=7446."
        ),
    ),
    (
        "w8a",
        "w8a.bz2",
        "binary",
        (49749, 300, 579586),
        "d7fe0ec5079fb8fb0901f85ecbbf87e05698600dc0326e0edbe222426b438801",
        True,
        (
            "w8a. Source: unc-optimization/AccSPD @ "
            "d2f1f2c961e3401032649544445bb24ab63ab1c5 : data/w8a (one trailing empty "
            "line removed). LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), originally Platt 1998 web-"
            "page dataset (300 binary keyword features); single source, shape matches"
            " official. Label counts: -1=48270, 1=1479."
        ),
    ),
    (
        "mushrooms",
        "mushrooms.bz2",
        "binary",
        (8124, 112, 170604),
        "a039b9f09528a5dcfb76e0e3d32eb29b10aa6852485d90fc79cc8dffd3f192e2",
        True,
        (
            "mushrooms. Source: ericdasse28/online-learning @ "
            "9413bf5e973012e1c3522cab5efb5767553e7cf3 : madelon.txt (file is "
            "misnamed; content is LIBSVM mushrooms). LIBSVM datasets page (Chang & "
            "Lin, csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), originally UCI "
            "Mushroom; labels 1/2 as in LIBSVM; identical to ambroiseodt/tsim "
            "data/mushrooms.txt (after CRLF->LF) and to StochOpt.jl "
            "data/mushrooms.jld. Label counts: 1=3916, 2=4208."
        ),
    ),
    (
        "madelon.t",
        "madelon.t.bz2",
        "binary",
        (600, 500, 300000),
        "0df7b98ec96d904ee121683ea68672c641aab661445827940692b234f47d6337",
        False,
        (
            "madelon.t (test/validation split only). Source: ericdasse28/online-"
            "learning @ 9413bf5e973012e1c3522cab5efb5767553e7cf3 : madelon.t. LIBSVM "
            "datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), NIPS 2003 feature "
            "selection challenge MADELON validation set (600 x 500, with labels); "
            "training file in that repo is truncated and was NOT used. Label counts: "
            "-1=300, 1=300."
        ),
    ),
    (
        "splice",
        "splice.bz2",
        "binary",
        (1000, 60, 60000),
        "df991ccee17e4e43a20b8bae22ab9367dec4c5d46197b0c721952390d423635b",
        True,
        (
            "splice. Source: ambroiseodt/tsim @ "
            "c80abbd765cdaa57ad2b598583251850ded28e62 : data/splice.txt (lines "
            "1-1000). LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), originally Delve/StatLog "
            "splice (unscaled); lines 1-1000 identical to StochOpt.jl "
            "data/splice.jld. Label counts: -1=483, 1=517."
        ),
    ),
    (
        "splice.t",
        "splice.t.bz2",
        "binary",
        (2175, 60, 130500),
        "37843c9744b820332125ef9d566f639b118d32ca36e1dbaf9c1bbb4bb58c16ef",
        True,
        (
            "splice.t (test). Source: ambroiseodt/tsim @ "
            "c80abbd765cdaa57ad2b598583251850ded28e62 : data/splice.txt (lines "
            "1001-3175). LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets) (splice.t, 2175 test rows "
            "appended after the 1000 train rows in the source file). Label counts: "
            "-1=1044, 1=1131."
        ),
    ),
    (
        "phishing",
        "phishing.bz2",
        "binary",
        (11055, 68, 331650),
        "cbb192651568d8543aff9f1095f93f2f966f9babfc520311e569d0888b5d784b",
        False,
        (
            "phishing (row-normalized variant). Source: ambroiseodt/tsim @ "
            "c80abbd765cdaa57ad2b598583251850ded28e62 : data/phishing.txt (CRLF->LF)."
            " LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), originally UCI Phishing "
            "Websites; 68 one-hot features; NOTE every nonzero equals 0.18257 "
            "(=1/sqrt(30), unit-norm rows) - may differ from the LIBSVM file values. "
            "Label counts: 0=4898, 1=6157."
        ),
    ),
    (
        "svmguide1",
        "svmguide1.bz2",
        "binary",
        (3089, 4, 12356),
        "a34365cee1ab7ac8010a7c2d40e8b96aa7c53127825656ee45a575c5f0a01bcc",
        True,
        (
            "svmguide1. Source: ambroiseodt/tsim @ "
            "c80abbd765cdaa57ad2b598583251850ded28e62 : data/svmguide1.txt. LIBSVM "
            "datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), svmguide1 (astroparticle "
            "application, Hsu/Chang/Lin guide), unscaled, train split. Label counts: "
            "0=1089, 1=2000."
        ),
    ),
    (
        "colon-cancer",
        "colon-cancer.bz2",
        "binary",
        (62, 2000, 124000),
        "e5ecf6c2b5e27050628241ac3f4781309102b9b3f3b3dd12e1820d3508c01586",
        True,
        (
            "colon-cancer. Source: gowerrobert/StochOpt.jl @ "
            "eeea6c999883564d1908aa558d8577d8894999bb : data/colon-cancer.jld (Julia "
            "JLD/HDF5 SparseMatrixCSC, transposed; values re-printed with shortest "
            "round-trip repr). LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), originally Alon et al. "
            "1999 colon tumor microarray (62 x 2000), LIBSVM-normalized (instance- "
            "then feature-wise). Label counts: -1=40, 1=22."
        ),
    ),
    (
        "australian",
        "australian.bz2",
        "binary",
        (690, 14, 9660),
        "8ceed64fe255562aaaeedc80926dce3d8ecb18602d90b0f77ae8e135b13974ff",
        True,
        (
            "australian. Source: gowerrobert/StochOpt.jl @ "
            "eeea6c999883564d1908aa558d8577d8894999bb : data/australian.jld. LIBSVM "
            "datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets), originally StatLog "
            "Australian credit (unscaled). Label counts: -1=383, 1=307."
        ),
    ),
    (
        "news20.rdatasets",
        "news20.bz2",
        "multiclass",
        (15935, 62061, 1272569),
        "8c79851f6f5fdc5540a0d04a5ab728353c42d26b84e73f93bda301c06c15ffe9",
        False,
        (
            "news20 (multiclass, train split). Source: jolars/rdatasets @ "
            "8a912ae2a03bb8c97e606dc93013d2068405e1d8 : data/news20.rda (R "
            "dgCMatrix). LIBSVM datasets page (Chang & Lin, "
            "csie.ntu.edu.tw/~cjlin/libsvmtools/datasets) multiclass news20 (train, "
            "15,935 docs, 62,061 word features, 20 classes), originally Lang 1995 20 "
            "Newsgroups; built by that repo from LIBSVM news20.bz2. Label counts: "
            "1=797, 2=780, 3=797, 4=796, 5=796, 6=797, 7=799, 8=798, 9=799, 10=792, "
            "11=798, 12=797, 13=798, 14=798, 15=799, 16=799, 17=800, 18=799, 19=799, "
            "20=797."
        ),
    ),
    (
        "arcene_train",
        "arcene_train.bz2",
        "binary",
        (100, 10000, 540941),
        "fc5d6a4e7b047365437789ae1930d5a50d4a08e9f0b846178eaa8fbd74f6f781",
        False,
        (
            "arcene (train). Source: jolars/rdatasets @ "
            "8a912ae2a03bb8c97e606dc93013d2068405e1d8 : data/arcene.rda. NIPS 2003 "
            "feature selection challenge ARCENE train set (mass-spectrometry cancer "
            "vs normal), via UCI / Tibshirani strong-rules data mirror; labels mapped"
            " to +-1. Label counts: -1=56, 1=44."
        ),
    ),
    (
        "dorothea_train",
        "dorothea_train.bz2",
        "binary",
        (800, 88119, 727760),
        "95e4d9d90cc2053d6d852a7a864fc30e1ade33c475e0d77366a9e04e68826f91",
        False,
        (
            "dorothea (train). Source: jolars/rdatasets @ "
            "8a912ae2a03bb8c97e606dc93013d2068405e1d8 : data/dorothea.rda (stored "
            "column-centred; binary matrix recovered exactly as x>0). NIPS 2003 "
            "feature selection challenge DOROTHEA train set (drug discovery, binary "
            "sparse); NOTE the 11,881 all-zero columns of the original 100,000 were "
            "dropped by that repo, so feature indices are re-numbered 1..88119. Label"
            " counts: -1=722, 1=78."
        ),
    ),
    (
        "cpusmall",
        "cpusmall.bz2",
        "regression",
        (8192, 12, 94903),
        "92db0c01cbbb977ecbb96a0f5b8f5b19481c095cfcfac8958d00031e38898032",
        True,
        (
            "cpusmall. Source: jolars/rdatasets @ "
            "8a912ae2a03bb8c97e606dc93013d2068405e1d8 : data/cpusmall.rda. LIBSVM "
            "datasets page (Chang & Lin, csie.ntu.edu.tw/~cjlin/libsvmtools/datasets)"
            " regression cpusmall (unscaled), originally Delve comp-activ."
        ),
    ),
    (
        "usps_zip_train",
        "usps_zip_train.bz2",
        "multiclass",
        (7291, 256, 1866151),
        "a063aa911b43b5fd54fae193dc5e5ff48c3c252788761994e3dd5832c238378e",
        False,
        (
            "usps (ESL zip.train). Source: jolars/rdatasets @ "
            "8a912ae2a03bb8c97e606dc93013d2068405e1d8 : data/zipcode.rda. USPS "
            "handwritten digits train set (7,291 x 256, values in [-1,1]), "
            "Hastie/Tibshirani/Friedman ESL zip.train; same source as LIBSVM usps but"
            " labels here are digits 0-9 (LIBSVM uses 1-10). Label counts: 0=1194, "
            "1=1005, 2=731, 3=658, 4=652, 5=556, 6=664, 7=645, 8=542, 9=644."
        ),
    ),
    (
        "leu_golub_raw_train",
        "leu_golub_raw_train.bz2",
        "binary",
        (38, 7129, 270164),
        "c0fa9628c1527b8e30867f29927a1c3dd7a0af5a4e37b3f59c5bd00fdc197a10",
        False,
        (
            "leukemia raw (Golub train, 38). Source: jhcui18/Leukemia_classifier @ "
            "c1adb976376075b2c5e38407e0f58529e7be8924 : data_set_ALL_AML_train.csv + "
            "actual.csv. Golub et al. 1999 (Science) ALL/AML leukemia, Broad "
            "Institute data_set_ALL_AML_{train,independent}.csv as mirrored on Kaggle"
            " (crawford/gene-expression); raw MAS intensities, 7129 probes, label "
            "+1=ALL -1=AML, rows in source-file column order (patient ids 1,2,3,4,5,6"
            ",7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,34,35,36,37"
            ",38,28,29,30,31,32,33); verified: log(max(x,100)) equals Tibshirani "
            "strong-rules ltrain.x (jolars/rdatasets data/golub.rda) to 5e-7. Label "
            "counts: -1=11, 1=27."
        ),
    ),
    (
        "leu_golub_raw_test",
        "leu_golub_raw_test.bz2",
        "binary",
        (34, 7129, 241509),
        "adfd2281f6c3638bb43ae7c837588db255207b39cf4167a3eeedc64baff898c1",
        False,
        (
            "leukemia raw (Golub independent test, 34). Source: "
            "jhcui18/Leukemia_classifier @ c1adb976376075b2c5e38407e0f58529e7be8924 :"
            " data_set_ALL_AML_independent.csv + actual.csv. Golub et al. 1999 "
            "(Science) ALL/AML leukemia, Broad Institute "
            "data_set_ALL_AML_{train,independent}.csv as mirrored on Kaggle "
            "(crawford/gene-expression); raw MAS intensities, 7129 probes, label "
            "+1=ALL -1=AML, rows in source-file column order (patient ids 39,40,42,47"
            ",48,49,41,43,44,45,46,70,71,72,68,69,67,55,56,59,52,53,51,50,54,57,58,60"
            ",61,65,66,63,64,62). Label counts: -1=14, 1=20."
        ),
    ),
    (
        "leu_recon",
        "leu_recon.bz2",
        "binary",
        (38, 7129, 270902),
        "4045de3373528bf2a4b05e83a9992fdda1459a4227c93d232983abda15600232",
        False,
        (
            "leu (RECONSTRUCTED, not the LIBSVM file). Source: derived from "
            "leu_golub_raw_train (this folder). Reconstruction of LIBSVM leu from raw"
            " Golub train data using the LIBSVM page recipe (instance-wise then "
            "feature-wise standardisation to mean 0 / variance 1, ddof=1, train split"
            " on its own); same shape/labels as LIBSVM leu (38 x 7129) but NOT byte- "
            "or value-identical to leu.bz2. Label counts: -1=11, 1=27."
        ),
    ),
    (
        "leu_recon.t",
        "leu_recon.t.bz2",
        "binary",
        (34, 7129, 242386),
        "355129c4808bafebc3e562d1a9e1711421078ff334614d9e4a885ce5fb4de987",
        False,
        (
            "leu.t (RECONSTRUCTED). Source: derived from leu_golub_raw_test (this "
            "folder). As leu_recon but for the 34-sample independent test split, "
            "standardised on its own. Label counts: -1=14, 1=20."
        ),
    ),
    (
        "rcv1_small_vw",
        "rcv1_small_vw.bz2",
        "binary",
        (1000, 47236, 77739),
        "4b8a342a9c2a21289cdc6e9a2ff5d2cc60996319b8f71da1a1424c371aeb55de",
        False,
        (
            "rcv1 binary, 1000-doc subset. Source: VowpalWabbit/vowpal_wabbit @ "
            "872fd8da03677dbf83183890262a5d8f237ff3e0 : test/train-"
            "sets/rcv1_small.dat (VW format, single namespace; converted to svmlight "
            "textually, values unchanged). RCV1-v2 (Lewis et al. 2004) binary task, "
            "tf-idf unit-norm rows as in LIBSVM rcv1.binary / Bottou SGD "
            "preprocessing; 1000-document subset shipped as Vowpal Wabbit test data; "
            "n_features here = max index seen (official rcv1: 47,236). Label counts: "
            "-1=541, 1=459."
        ),
    ),
    (
        "mnist_test.scale",
        "mnist_test.scale.bz2",
        "multiclass",
        (10000, 784, 1511219),
        "3cdb47f8492dada92d0284a4575fff264a88bafc4148239b03a80da80a3dec0e",
        False,
        (
            "mnist test (10k), scaled. Source: ambroiseodt/tsim @ "
            "c80abbd765cdaa57ad2b598583251850ded28e62 : data/MNIST/raw/t10k-images-"
            "idx3-ubyte.gz + data/MNIST/raw/t10k-labels-idx1-ubyte.gz (gzip files "
            "intact, sizes 1,648,877 and 4,542 bytes as for the official LeCun files;"
            " label file equals the uncompressed copy in the same repo). MNIST test "
            "set (LeCun et al.), pixels/255 as in LIBSVM mnist.scale (LIBSVM "
            "mnist.scale.t = this split); train images absent from the snapshot (>4 "
            "MiB). Label counts: 0=980, 1=1135, 2=1032, 3=1010, 4=982, 5=892, 6=958, "
            "7=1028, 8=974, 9=1009."
        ),
    ),
)


def _mirror_entry(row: tuple) -> DatasetSpec:
    name, file, task, (n_samples, n_features, nnz), sha256, official, provenance = row
    sources = [Source(file, sha256)]
    if official:
        sources.append(_libsvm_source(MIRROR_URLS[name], taken=file))
    return DatasetSpec(
        name,
        task,
        tuple(sources),
        n_samples,
        n_features,
        nnz,
        test=TEST_SPLITS.get(name),
        provenance=provenance,
    )


OFFICIAL: tuple[DatasetSpec, ...] = (
    _official(
        "w8a.t",
        "binary/w8a.t",
        "binary",
        14951,
        300,
        "LIBSVM w8a test split (Platt 1998 web-page dataset).",
    ),
    _official(
        "rcv1.binary",
        "binary/rcv1_train.binary.bz2",
        "binary",
        20242,
        47236,
        "LIBSVM rcv1.binary train split: RCV1-v2 (Lewis et al. 2004), CCAT and ECAT vs "
        "GCAT and MCAT, tf-idf unit-norm rows.",
        test="rcv1.binary.t",
    ),
    _official(
        "rcv1.binary.t",
        "binary/rcv1_test.binary.bz2",
        "binary",
        677399,
        47236,
        "LIBSVM rcv1.binary test split (RCV1-v2, Lewis et al. 2004).",
    ),
    _official(
        "news20.binary",
        "binary/news20.binary.bz2",
        "binary",
        19996,
        1355191,
        "LIBSVM news20.binary (Keerthi & DeCoste 2005): 20 Newsgroups, two halves of the "
        "groups, unit-norm rows.",
    ),
    _official(
        "news20",
        "multiclass/news20.bz2",
        "multiclass",
        15935,
        62061,
        "LIBSVM multiclass news20 train split (Lang 1995, 20 classes). The mirror's "
        "news20.bz2 is a rebuilt copy registered as news20.rdatasets.",
        test="news20.t",
    ),
    _official(
        "news20.t",
        "multiclass/news20.t.bz2",
        "multiclass",
        3993,
        62061,
        "LIBSVM multiclass news20 test split (Lang 1995, 20 classes).",
    ),
    _official(
        "real-sim",
        "binary/real-sim.bz2",
        "binary",
        72309,
        20958,
        "LIBSVM real-sim (McCallum's real vs simulated auto/aviation UseNet articles).",
    ),
    _official(
        "covtype.binary",
        "binary/covtype.libsvm.binary.bz2",
        "binary",
        581012,
        54,
        "LIBSVM covtype.binary: UCI Covertype, class 2 vs the others; labels 1/2, unscaled.",
    ),
    _official(
        "url",
        "binary/url_combined.bz2",
        "binary",
        2396130,
        3231961,
        "LIBSVM url (Ma et al. 2009, malicious URL detection), days 0-120 combined.",
    ),
    _official(
        "leu",
        "binary/leu.bz2",
        "binary",
        38,
        7129,
        "LIBSVM leu: Golub et al. 1999 ALL/AML leukemia train split, instance-wise then "
        "feature-wise normalized. The mirror has only a reconstruction (leu_recon).",
        test="leu.t",
    ),
    _official(
        "leu.t",
        "binary/leu.t.bz2",
        "binary",
        34,
        7129,
        "LIBSVM leu test split (Golub et al. 1999 independent set).",
    ),
    _official(
        "duke",
        "binary/duke.bz2",
        "binary",
        44,
        7129,
        "LIBSVM duke breast-cancer (West et al. 2001), all 44 samples, normalized as leu.",
    ),
    _official(
        "ijcnn1",
        "binary/ijcnn1.bz2",
        "binary",
        49990,
        22,
        "LIBSVM ijcnn1 train split (IJCNN 2001 neural network competition, Prokhorov).",
        test="ijcnn1.t",
    ),
    _official(
        "ijcnn1.t",
        "binary/ijcnn1.t.bz2",
        "binary",
        91701,
        22,
        "LIBSVM ijcnn1 test split (IJCNN 2001 competition).",
    ),
    _official(
        "sector",
        "multiclass/sector/sector.bz2",
        "multiclass",
        6412,
        55197,
        "LIBSVM sector train split (McCallum's industry sector web pages, 105 classes).",
        test="sector.t",
    ),
    _official(
        "sector.t",
        "multiclass/sector/sector.t.bz2",
        "multiclass",
        3207,
        55197,
        "LIBSVM sector test split (105 classes).",
    ),
    _official(
        "mnist",
        "multiclass/mnist.bz2",
        "multiclass",
        60000,
        784,
        "LIBSVM mnist train split (LeCun et al. 1998), raw pixels 0-255, labels 0-9. The "
        "LIBSVM page states 780 features, but the test split of the same source reaches "
        "index 784 (see the mirror's mnist_test.scale), so both are read with 784 columns.",
        test="mnist.t",
    ),
    _official(
        "mnist.t",
        "multiclass/mnist.t.bz2",
        "multiclass",
        10000,
        784,
        "LIBSVM mnist test split (10k), raw pixels; 784 columns, as the train split.",
    ),
    _official(
        "usps",
        "multiclass/usps.bz2",
        "multiclass",
        7291,
        256,
        "LIBSVM usps train split (Hull 1994), values in [-1, 1], labels 1-10.",
        test="usps.t",
    ),
    _official(
        "usps.t",
        "multiclass/usps.t.bz2",
        "multiclass",
        2007,
        256,
        "LIBSVM usps test split, labels 1-10.",
    ),
    _official(
        "aloi",
        "multiclass/aloi.bz2",
        "multiclass",
        108000,
        128,
        "LIBSVM aloi (Amsterdam Library of Object Images, Geusebroek et al. 2005), 1000 classes.",
    ),
    _official(
        "gisette",
        "binary/gisette_scale.bz2",
        "binary",
        6000,
        5000,
        "LIBSVM gisette (NIPS 2003 feature selection challenge, 4 vs 9 digits), scaled to "
        "[-1, 1], train split.",
        test="gisette.t",
    ),
    _official(
        "gisette.t",
        "binary/gisette_scale.t.bz2",
        "binary",
        1000,
        5000,
        "LIBSVM gisette validation split used as test, scaled to [-1, 1].",
    ),
)

REGISTRY: dict[str, DatasetSpec] = {
    spec.name: spec for spec in (*map(_mirror_entry, MIRROR_FILES), *OFFICIAL)
}


def unknown_dataset(name: str, names: Iterable[str]) -> UnknownDatasetError:
    """The error for a dataset ``name`` not among ``names``, naming the close ones."""
    close = difflib.get_close_matches(name, list(names), n=5, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else "see faceoff datasets list"
    return UnknownDatasetError(f"unknown dataset {name!r}; {hint}")


def get_spec(name: str, registry: Mapping[str, DatasetSpec] | None = None) -> DatasetSpec:
    """The entry called ``name``; :class:`UnknownDatasetError` naming close matches."""
    registry = REGISTRY if registry is None else registry
    if name in registry:
        return registry[name]
    raise unknown_dataset(name, registry)
