# gradir-import's refusals: one located line on stderr and exit code 1, never
# a Python traceback.  The factories below fail in the model's own code (this
# file), whose file and line the message names.
# RUN: not gradir-import %s:raises_runtime 2>&1 | FileCheck %s --check-prefix=RUNTIME --implicit-check-not=Traceback
# RUN: not gradir-import %s:raises_type 2>&1 | FileCheck %s --check-prefix=TYPE --implicit-check-not=Traceback
# RUN: not gradir-import %s:raises_key 2>&1 | FileCheck %s --check-prefix=KEY --implicit-check-not=Traceback
# RUN: not gradir-import %s:NOT_CALLABLE 2>&1 | FileCheck %s --check-prefix=NOTCALLABLE --implicit-check-not=Traceback
# RUN: not gradir-import %s:missing 2>&1 | FileCheck %s --check-prefix=MISSING --implicit-check-not=Traceback
# RUN: not gradir-import %s:three 2>&1 | FileCheck %s --check-prefix=THREE --implicit-check-not=Traceback
# RUN: not gradir-import %s:not_a_module 2>&1 | FileCheck %s --check-prefix=NOTMODULE --implicit-check-not=Traceback

# A syntax error, and an exception while the model's file loads:
# RUN: printf 'import torch\n\ndef model(:\n    pass\n' > %t.syntax.py
# RUN: not gradir-import %t.syntax.py:model 2>&1 | FileCheck %s --check-prefix=SYNTAX --implicit-check-not=Traceback
# RUN: printf 'import torch\n\nCONFIG = {}\nWIDTH = CONFIG["width"]\n' > %t.load.py
# RUN: not gradir-import %t.load.py:model 2>&1 | FileCheck %s --check-prefix=LOAD --implicit-check-not=Traceback
# RUN: not gradir-import %t.nonexistent.py:model 2>&1 | FileCheck %s --check-prefix=NOFILE --implicit-check-not=Traceback

# Malformed --input shapes, named in the message (they were read leniently:
# 3xxx4xf32 as 3x4, 2_0x4xf32 as 20x4, non-ASCII digits as digits):
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 3xxx4xf32 2>&1 | FileCheck %s --check-prefix=XXX --implicit-check-not=Traceback
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 2_0x4xf32 2>&1 | FileCheck %s --check-prefix=UNDERSCORE --implicit-check-not=Traceback
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 3x٤xf32 2>&1 | FileCheck %s --check-prefix=NONASCII --implicit-check-not=Traceback
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 2x4xf32x 2>&1 | FileCheck %s --check-prefix=TRAILING --implicit-check-not=Traceback
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 2x4 2>&1 | FileCheck %s --check-prefix=NOTYPE --implicit-check-not=Traceback
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input 2x4xf33 2>&1 | FileCheck %s --check-prefix=BADTYPE --implicit-check-not=Traceback
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input=-2x4xf32 2>&1 | FileCheck %s --check-prefix=NEGATIVE --implicit-check-not=Traceback
# RUN: not gradir-import %S/Inputs/tiny_models.py:mlp --input= 2>&1 | FileCheck %s --check-prefix=EMPTY --implicit-check-not=Traceback
# An --input is checked before the model's code runs:
# RUN: not gradir-import %s:raises_runtime --input 2x4xf32x 2>&1 | FileCheck %s --check-prefix=TRAILING --implicit-check-not=Traceback

# XXX: gradir-import: error: --input '3xxx4xf32': size 2 is empty (an 'x' too many)
# UNDERSCORE: gradir-import: error: --input '2_0x4xf32': size 1 '2_0' is not a number (ASCII digits 0-9 only)
# NONASCII: gradir-import: error: --input '3x٤xf32': size 2 '٤' is not a number (ASCII digits 0-9 only)
# TRAILING: gradir-import: error: --input '2x4xf32x': nothing after the last 'x': the element type (f16, bf16, f32, f64, i64, i32, i1) comes last
# NOTYPE: gradir-import: error: --input '2x4': it ends with a size, 4: the element type (f16, bf16, f32, f64, i64, i32, i1) comes last
# BADTYPE: gradir-import: error: --input '2x4xf33': unknown element type 'f33' (one of f16, bf16, f32, f64, i64, i32, i1)
# NEGATIVE: gradir-import: error: --input '-2x4xf32': size 1 '-2' is not a number (ASCII digits 0-9 only)
# EMPTY: gradir-import: error: --input '': empty: expected SIZExSIZEx...xTYPE (64x1x8x8xf32), or TYPE (f32) for a 0-d input

# SYNTAX: gradir-import: error: {{.*}}syntax.py:3: SyntaxError: invalid syntax
# LOAD: gradir-import: error: {{.*}}load.py:4: KeyError: 'width'
# NOFILE: gradir-import: error: {{.*}}nonexistent.py: no such file

import torch
import torch.nn as nn


def raises_runtime():
    # RUNTIME: gradir-import: error: {{.*}}gradir_import-invalid.py:[[@LINE+1]]: RuntimeError: no checkpoint at weights.pt
    raise RuntimeError("no checkpoint at weights.pt")


def raises_type():
    # inside torch, called from here
    # TYPE: gradir-import: error: {{.*}}gradir_import-invalid.py:[[@LINE+1]]: TypeError: {{.+}}
    return nn.Linear(4, "8")


def _config():
    return {"width": 8}


def raises_key():
    # KEY: gradir-import: error: {{.*}}gradir_import-invalid.py:[[@LINE+1]]: KeyError: 'depth'
    return nn.Linear(4, _config()["depth"])


NOT_CALLABLE = 3
# NOTCALLABLE: gradir-import: error: {{.*}}gradir_import-invalid.py: 'NOT_CALLABLE' is not callable (it is of type int): FACTORY names a function or class that returns the model
# MISSING: gradir-import: error: {{.*}}gradir_import-invalid.py: defines no 'missing'


def three():
    return nn.Linear(2, 2), (torch.randn(1, 2),), "extra"
# THREE: gradir-import: error: the factory returned a tuple of 3: expected a torch.nn.Module or (module, example_args)


def not_a_module():
    return lambda x: x
# NOTMODULE: gradir-import: error: the factory returned a function: expected a torch.nn.Module or (module, example_args)
