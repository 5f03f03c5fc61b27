import test from 'ava';
import { MetricsRegistry } from '../../../shared/metrics.js';

test('label values are escaped as the Prometheus text format requires, and label names are sorted', (t) => {
  const metrics = new MetricsRegistry();
  const counter = metrics.counter('portico_test_total', 'A test counter');
  counter.inc({ route: '/plain', method: 'GET' });
  counter.inc({ route: 'back\\slash "quoted"\nnext line', method: 'POST' }, 2);
  counter.inc({ method: 'GET', route: '/plain' }); // names given in order: the same series
  const lines = metrics.render().split('\n');
  t.true(lines.includes('portico_test_total{method="GET",route="/plain"} 2'));
  t.true(lines.includes('portico_test_total{method="POST",route="back\\\\slash \\"quoted\\"\\nnext line"} 2'));
});
