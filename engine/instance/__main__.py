"""``python -m engine.instance --launch PATH --container N --task T``: one Heron Instance."""

from engine.instance.main import main

if __name__ == "__main__":
    main()
