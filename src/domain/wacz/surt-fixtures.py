# Remakes surt-fixtures.json's keys with Python's cdxj-indexer (run once, by hand; the tests only
# read the JSON):  python3 -m venv /tmp/v && /tmp/v/bin/pip install cdxj-indexer==1.5.0 surt==0.3.1
#                  /tmp/v/bin/python src/domain/wacz/surt-fixtures.py
# One response record per fixture URL goes into a WARC, cdxj-indexer indexes it unsorted, and each
# key is the first field of its line; surt.surt(url) must agree.
import io
import json
import os

import surt
from cdxj_indexer.main import CDXJIndexer
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

here = os.path.join(os.path.dirname(__file__), 'surt-fixtures.json')
fixture = json.load(open(here, encoding='utf-8'))
urls = [k['url'] for k in fixture['keys']]
warc = io.BytesIO()
writer = WARCWriter(warc, gzip=False)
for url in urls:
    http = StatusAndHeaders('200 OK', [('Content-Type', 'text/plain')], protocol='HTTP/1.1')
    writer.write_record(writer.create_warc_record(url, 'response', payload=io.BytesIO(b'x'), http_headers=http))
path = '/tmp/surt-fixtures.warc'
open(path, 'wb').write(warc.getvalue())
out = io.StringIO()
CDXJIndexer(inputs=[path], output=out, sort=False).process_all()
keys = [line.split(' ', 1)[0] for line in out.getvalue().splitlines() if line]
assert len(keys) == len(urls)
for url, key in zip(urls, keys):
    assert surt.surt(url) == key, (url, key, surt.surt(url))
fixture['keys'] = [{'url': u, 'key': k} for u, k in zip(urls, keys)]
open(here, 'w', encoding='utf-8').write(json.dumps(fixture, ensure_ascii=False, indent=2) + '\n')
