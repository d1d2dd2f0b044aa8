# SPDX-License-Identifier: GPL-2.0-only
# Sphinx configuration: `make docs` builds Documentation/ into
# build/docs/html; tests/unit/docs.sh builds it with warnings as errors.
project = "r2cc"
copyright = "the r2cc authors"
version = release = "0.1.0"
master_doc = "index"
exclude_patterns = ["ABI"]
html_theme = "alabaster"
# The documents quote C, shell and tables; none needs an extension.
extensions = []
