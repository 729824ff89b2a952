"""C sources msinspect compiles at run time (installed as the package ``msinspect.csrc``).

``libcuda_stub.c`` is the dry run's no-device stand-in for ``libcuda.so.1``; see
:func:`msinspect.dryrun.environment.stub_source`.
"""
