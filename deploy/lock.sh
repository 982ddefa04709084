#!/bin/sh
# Lock every package the app and the suite install, with pip-tools' pip-compile (run from the checkout; needs
# network access to PyPI and, for torch, the CPU wheel pip finds here or on PyTorch's CPU index):
#   requirements.in      -> requirements.txt       (the app; README's first command, the Docker image's constraint)
#   requirements-test.in -> requirements-test.txt  (the suite's extras, held to the app's lock)
#   requirements-scan.in -> requirements-scan.txt  (the policy scan, checkov, in a virtual environment of its own)
# torch resolves to its CPU build, "2.13.0+cpu". The lock keeps "torch==2.13.0", which that build satisfies
# (PEP 440 ignores a local label the pin does not name), so that a machine without PyTorch's CPU index still
# installs 2.13.0 rather than failing on a label only that index has.
set -eu
export CUSTOM_COMPILE_COMMAND="sh deploy/lock.sh"
cd "$(dirname "$0")/.."
compile() {
    pip-compile --quiet --strip-extras --allow-unsafe --no-emit-index-url --no-emit-find-links "$@"
}
compile --output-file requirements.txt requirements.in
sed -i 's/^torch==\([0-9.]*\)+cpu$/torch==\1/' requirements.txt
compile --output-file requirements-test.txt requirements-test.in
sed -i 's/^torch==\([0-9.]*\)+cpu$/torch==\1/' requirements-test.txt
compile --output-file requirements-scan.txt requirements-scan.in
