"""``Resources``: CPU and RAM requested per container (``Config.set_container_resources``)."""

from __future__ import annotations


class Resources:
    """CPU (cores) and RAM (bytes) for a container."""

    def __init__(self) -> None:
        self._cpu = 0.0
        self._ram = 0

    def set_cpu(self, cpu: float) -> Resources:
        self._cpu = float(cpu)
        return self

    def set_ram(self, ram: int) -> Resources:
        self._ram = int(ram)
        return self

    def get_cpu(self) -> float:
        return self._cpu

    def get_ram(self) -> int:
        return self._ram

    def set_ram_in_mb(self, ram: int) -> Resources:
        return self.set_ram(ram * 1024 * 1024)

    def set_ram_in_gb(self, ram: int) -> Resources:
        return self.set_ram_in_mb(ram * 1024)

    def __repr__(self) -> str:
        return f"Resource {{cpu: {self._cpu}, ram: {self._ram}}}"
