from sqlbench_lmeval.cli import main

raise SystemExit(main())
