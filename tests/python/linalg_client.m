% An Octave program for the integration tests: *, \, chol, svd, eig on fixed random inputs of ~200,
% every result written as raw doubles to the file named by the first argument.
% Each call has its own sizes so the test can tell the calls apart in the trace.
args = argv();
fid = fopen(args{1}, 'wb');
put = @(x) fwrite(fid, [numel(x); x(:)], 'double');
rand('twister', 20261129); randn('twister', 20261129);
a = randn(211, 173); b = randn(173, 157);
put(a * b);                                  % dgemm 211 x 157 x 173
s = randn(229, 229); rhs = randn(229, 7);
put(s \ rhs);                                % LU solve n=229 nrhs=7
q = randn(260, 233); p = q' * q + eye(233);
put(chol(p));                                % dpotrf n=233
v = randn(241, 197);
[u, d, w] = svd(v);                          % 241 x 197
put(u); put(diag(d)); put(w);
y = randn(251, 251); y = (y + y') / 2;
[ev, ew] = eig(y);                           % symmetric n=251
put(ev); put(diag(ew));
g = randn(263, 263);
[gv, gw] = eig(g);                           % general n=263
put(real(gv)); put(imag(gv)); put(real(diag(gw))); put(imag(diag(gw)));
fclose(fid);
