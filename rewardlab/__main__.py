import sys

from rewardlab.cli import main

sys.exit(main())
