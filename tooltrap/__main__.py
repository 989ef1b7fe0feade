from tooltrap.cli import main

raise SystemExit(main())
