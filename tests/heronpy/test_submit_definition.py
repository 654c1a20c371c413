"""A topology definition (``Topology.write()``, heronpy/api/definition.py) read back:
fields and custom subscriptions come back as ``Grouping.FIELDS``/``Grouping.CUSTOM``
themselves (pickled by name, not as copies of their classes), so the compiler and a
topology's own ``isinstance`` checks see heronpy's types in every process."""

from __future__ import annotations

import base64

from heronpy.api import heron_options
from heronpy.api.bolt.bolt import Bolt
from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.definition import load_document, read_definition
from heronpy.api.definition_writer import write_definition
from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology


class _Spout(Spout):
    outputs = ["word"]


class _Bolt(Bolt):
    pass


class _First(ICustomGrouping):
    def prepare(self, context, component, stream, target_tasks):
        self.target_tasks = sorted(target_tasks)

    def choose_tasks(self, values):
        return self.target_tasks[:1]


class Groupings(Topology):
    spout = _Spout.spec(par=1)
    by_word = _Bolt.spec(par=2, inputs={spout: Grouping.fields("word")})
    custom = _Bolt.spec(par=2, inputs={spout: Grouping.custom(_First())})


def test_fields_and_custom_groupings_come_back_as_heronpys_own(tmp_path):
    path = write_definition(Groupings, {heron_options.TMPDIR_KEY: str(tmp_path)})
    pickled = base64.b64decode(load_document(path)["specs"])
    assert b"heronpy.api.stream" in pickled and b"_make_skeleton_class" not in pickled

    topology = read_definition(path)
    by_word = next(iter(topology.by_word.inputs.values()))
    custom = next(iter(topology.custom.inputs.values()))
    assert type(by_word) is Grouping.FIELDS and by_word.fields == ["word"]
    assert type(custom) is Grouping.CUSTOM and Grouping.is_grouping_sane(custom)
