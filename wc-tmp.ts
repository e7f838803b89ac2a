import { wildcardToRegExp } from './packages/core/src/conditions/wildcard';
for (const p of ['*.example.com', 'a?c', 'a.b+c', '**a**b*', '*a*a*a*a*a*a*a*a*a*a*a*b', 'x']) console.log(p, wildcardToRegExp(p));
const r = wildcardToRegExp('*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b');
const t = Date.now(); console.log(r.test('a'.repeat(100000)), Date.now()-t, 'ms');
const naive = /^.*a.*a.*a.*a.*a.*a.*b$/s; const t2 = Date.now(); console.log(naive.test('a'.repeat(300)), Date.now()-t2, 'ms naive');
