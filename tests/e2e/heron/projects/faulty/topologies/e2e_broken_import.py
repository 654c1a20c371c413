from e2e_heron_broken import Never
from e2e_heron_faulty import Numbers

from compat.storm_api import Topology


class BrokenImport(Topology):
    numbers = Numbers.spec()
    never = Never.spec(inputs=[numbers])
