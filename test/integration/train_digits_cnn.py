# The README's demo in its quick mode: a PyTorch CNN imported, differentiated
# and compiled by gradir trains on scikit-learn's digits; the test accuracy
# reaches the threshold and the float64 gradient checks pass (the script
# exits non-zero otherwise); the loss-curve PNG is written.
# RUN: %PYTHON %gradir_src/examples/train_digits_cnn.py --quick --plot %t.png | FileCheck %s
# RUN: %PYTHON -c "import sys; d = open(sys.argv[1], 'rb').read(8); sys.exit(d != b'\x89PNG\r\n\x1a\n')" %t.png
# CHECK: digits: 1437 training and 360 test images (8x8)
# CHECK: model: DigitsCNN (PyTorch)
# CHECK: gradir: imported, differentiated and compiled the model in
# CHECK: epoch  1/3 [{{.*}}] loss {{.*}} test accuracy
# CHECK: epoch  3/3 [########################] loss {{.*}} test accuracy
# CHECK: time per epoch: gradir {{[0-9]+}} ms, PyTorch eager (1 thread) {{[0-9]+}} ms
# CHECK: test accuracy: gradir
# CHECK: loss curves written to
# CHECK: gradient check (float64): dloss/dconv1.weight[3,0,1,1] {{.*}} OK
# CHECK: gradient check (float64): every gradient vs torch.autograd, {{.*}} OK
# CHECK: accuracy check: {{.*}} OK
