"""Stage names in one module: files of a stage are found by name, never by number, in both
``.ir`` and ``.ir.gz`` form (the dry run's old pattern matched only ``.ir``)."""
from msinspect.stages import files_of_stage


def test_files_of_stage_by_name_both_suffixes(tmp_path):
    for name in ("step_parallel_end_0133.ir", "21_step_parallel_end_0021.ir.gz", "step_parallel_begin_0132.ir",
                 "opt_pass_step_parallel_end_x.ir", "step_parallel_end_0134.txt", "validate_0140.ir"):
        (tmp_path / name).write_text("")
    assert [p.name for p in files_of_stage(tmp_path, "step_parallel_end")] == [
        "21_step_parallel_end_0021.ir.gz", "step_parallel_end_0133.ir"]
    assert [p.name for p in files_of_stage(tmp_path, ("step_parallel_begin", "validate"))] == [
        "step_parallel_begin_0132.ir", "validate_0140.ir"]


def test_files_of_stage_without_folder(tmp_path):
    assert files_of_stage(tmp_path / "absent", "validate") == []
