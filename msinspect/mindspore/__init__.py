"""MindSpore's own facts, with no pandas and no parser: its communication vocabulary and the names
the parallel pass gives what it inserts (:mod:`~msinspect.mindspore.vocabulary`), how each
operator family lays its tensors out over the devices (:mod:`~msinspect.mindspore.layouts`), the
ranks a group's name or hash stands for (:mod:`~msinspect.mindspore.comm_groups`), how it names
operators (:mod:`~msinspect.mindspore.naming`), its element types (:mod:`~msinspect.mindspore.dtypes`),
and the records MindSpore writes of its own decisions (:mod:`~msinspect.mindspore.records`)."""
