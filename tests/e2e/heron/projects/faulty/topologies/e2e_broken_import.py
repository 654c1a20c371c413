from compat.storm_api import Topology

from e2e_heron_broken import Never
from e2e_heron_faulty import Numbers


class BrokenImport(Topology):
    numbers = Numbers.spec()
    never = Never.spec(inputs=[numbers])
