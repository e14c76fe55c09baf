import unittest
from pairs import parse_pairs

class PairsTest(unittest.TestCase):
    def test_pairs(self):
        self.assertEqual(parse_pairs('a=1;b=2'), {'a': '1', 'b': '2'})

    def test_empty_parts(self):
        self.assertEqual(parse_pairs('a=1;;'), {'a': '1'})

if __name__ == '__main__':
    unittest.main()
