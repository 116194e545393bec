function classifyResult = challenge(recordName)
%
% A 2017-style Octave entry written for Proctor's tests (not the organizers' code): it reads
% the record as the 2017 sample's rdmat.m did (the header with fopen/fgetl/textscan, the
% samples with load of the MATLAB v4 file), band-passes it with the signal package's butter
% and filtfilt, finds the beats with findpeaks and calls the rhythm from the RR intervals.
%
% classifyResult: 'N' normal, 'A' AF, 'O' other rhythm, '~' noisy

classifyResult = '~';

[ecg, fs] = read_record(recordName);
[b, a] = butter(3, [5 15] / (fs / 2));
filtered = filtfilt(b, a, ecg);
energy = abs(filtered);
if max(energy) <= 0
    return;
end
[~, beats] = findpeaks(energy, 'MinPeakHeight', 0.4 * prctile(energy, 99), ...
                       'MinPeakDistance', round(0.25 * fs));
RR = diff(beats(:)) / fs;
if length(RR) < 4
    return;
end
irregularity = median(abs(diff(RR))) / median(RR);
rate = 60 / median(RR);
if irregularity > 0.08
    classifyResult = 'A';
elseif rate > 100 || rate < 50
    classifyResult = 'O';
else
    classifyResult = 'N';
end
end

function [ecg, fs] = read_record(recordName)
fid = fopen([recordName '.hea'], 'rt');
if fid == -1
    error(['Could not open file: ' recordName '.hea']);
end
line = fgetl(fid);
while line(1) == '#'
    line = fgetl(fid);
end
info = textscan(line, '%s %d %f %d');
fs = double(info{3});
info = textscan(fgetl(fid), '%s %s %s %d %d %f %d %d %s');
fclose(fid);
gain = info{3}{1};
units = strfind(gain, '/');
if ~isempty(units)
    gain = gain(1:units(1) - 1);
end
baseline = double(info{5});
open = strfind(gain, '(');
if ~isempty(open)
    baseline = str2double(gain(open + 1:strfind(gain, ')') - 1));
    gain = gain(1:open - 1);
end
load([recordName '.mat']);   % defines val, as in the 2017 sample
ecg = (double(val(1, :)) - baseline) / str2double(gain);
end
