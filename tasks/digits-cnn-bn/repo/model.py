"""The convolutional network: two 3x3 convolutions with batch normalisation, then two
fully connected layers, the first also batch-normalised. Inputs are NCHW (N, 1, 8, 8)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        # Layers keep PyTorch's default initialisation and BatchNorm settings
        # (eps=1e-5, momentum=0.1, running statistics used in eval mode).
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.bn3 = nn.BatchNorm1d(64)
        self.fc2 = nn.Linear(64, n_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))        # (N, 16, 8, 8)
        x = F.relu(self.bn2(self.conv2(x)))        # (N, 32, 8, 8)
        x = F.max_pool2d(x, 2)                     # (N, 32, 4, 4)
        x = torch.flatten(x, 1)                    # (N, 512), channel-major order
        x = F.relu(self.bn3(self.fc1(x)))          # (N, 64)
        return self.fc2(x)
