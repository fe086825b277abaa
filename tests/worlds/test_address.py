"""An address keys the town's lookups with a hash kept from its making: it must still find its
place in a process with other string hashes (a pickled address unpickled elsewhere)."""

import os
import pickle
import subprocess
import sys

from worlds.address import Address


def test_an_address_pickled_in_one_process_finds_its_place_in_another():
    blob = pickle.dumps(Address.parse("town:park:pond"))
    probe = ("import pickle, sys; from worlds.address import Address; "
             "a = pickle.loads(sys.stdin.buffer.read()); "
             "print({Address.parse('town:park:pond'): 'found'}.get(a, 'lost'))")
    found = subprocess.run([sys.executable, "-c", probe], input=blob, capture_output=True,
                           env={**os.environ, "PYTHONHASHSEED": "12345"}, check=True)
    assert found.stdout.decode().strip() == "found"


def test_equal_addresses_hash_alike_and_sort_by_their_parts():
    a, b = Address.parse("town:park:pond"), Address.of("town", "park", "pond")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert sorted([Address.parse("town:park:zoo"), a]) == [a, Address.parse("town:park:zoo")]
