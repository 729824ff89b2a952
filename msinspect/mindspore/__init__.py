"""MindSpore's own facts, with no pandas and no parser: how each operator family lays its tensors
out over the devices (:mod:`~msinspect.mindspore.layouts`), and the records MindSpore writes of
its own decisions (:mod:`~msinspect.mindspore.records`)."""
