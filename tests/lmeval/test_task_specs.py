"""Our tasks as their YAML defines them, read without lm-eval (``task_specs``), against what
the task files say (read here by hand: subsets, dialects, decoding, repeats)."""

from sqlbench_lmeval.lmeval.task_specs import benchmark_spec, task_spec, task_specs


def test_every_task_file_is_a_spec_and_groups_are_not():
    specs = task_specs()
    assert "logiccat" not in specs  # the group of the four category tasks
    assert {"logiccat_mini", "logiccat_sc", "tpcds", "tpcds_postgres", "tpcds_sc"} <= set(specs)
    assert {spec.benchmark for spec in specs.values()} == {"logiccat", "tpcds"}


def test_variants_keep_their_subset_dialect_and_decoding():
    mini = task_spec("logiccat_mini")
    assert (mini.dataset_kwargs["subset"], mini.greedy, mini.max_gen_toks) == ("mini", True, 512)
    assert mini.data_options() == {}
    assert task_spec("logiccat_mysql").data_options() == {"dialect": "mysql"}
    assert task_spec("tpcds_postgres").data_options() == {"dialect": "postgres"}
    cot = task_spec("logiccat_cot")
    assert cot.doc_to_text.endswith("doc_to_text_cot") and cot.max_gen_toks == 2048
    sampled = task_spec("tpcds_sc")
    assert (sampled.sampled, sampled.greedy, sampled.repeats) == (True, False, 8)
    assert sampled.generation_kwargs["temperature"] == 0.7
    assert "ex_reads_data" in sampled.metrics and "ex_reads_data" in mini.metrics


def test_a_whole_benchmark_stands_for_its_group():
    whole = benchmark_spec("logiccat")
    assert (whole.name, whole.dataset_kwargs["subset"], whole.greedy) == ("logiccat", "all", True)
    assert benchmark_spec("tpcds") == task_spec("tpcds")
    assert benchmark_spec("spider") is None
