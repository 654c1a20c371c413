"""The catalogue's multi-lang bolt: started by both engines as a subprocess
(``streamparse_run catalogue_shell.Shout``) and spoken to over Storm's multi-lang
protocol."""

from compat.storm_api import Bolt


class Shout(Bolt):
    outputs = ["n", "word"]

    def process(self, tup):
        n, word = tup.values
        self.emit([n, word.upper()])
